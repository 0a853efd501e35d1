package sqlitejournal

import (
	"context"
	"database/sql"
	"sync"
)

// stmtCache holds the journal's statements prepared once on its database:
// the pure-Go SQLite parses a statement on every call otherwise, which
// was most of a write's CPU. database/sql prepares each statement once
// per connection and reuses it.
type stmtCache struct {
	db    *sql.DB
	mu    sync.Mutex
	stmts map[string]*sql.Stmt
}

func (c *stmtCache) get(ctx context.Context, query string) (*sql.Stmt, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if s, ok := c.stmts[query]; ok {
		return s, nil
	}
	s, err := c.db.PrepareContext(ctx, query)
	if err != nil {
		return nil, err
	}
	if c.stmts == nil {
		c.stmts = map[string]*sql.Stmt{}
	}
	c.stmts[query] = s
	return s, nil
}

func (c *stmtCache) close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, s := range c.stmts {
		_ = s.Close()
	}
	c.stmts = nil
}

// preparedTx is a transaction of the journal's own database running the
// cached statements.
type preparedTx struct {
	tx    *sql.Tx
	cache *stmtCache
}

func (j *Journal) prepared(tx *sql.Tx) preparedTx { return preparedTx{tx: tx, cache: &j.stmts} }

func (p preparedTx) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	s, err := p.cache.get(ctx, query)
	if err != nil {
		return nil, err
	}
	return p.tx.StmtContext(ctx, s).ExecContext(ctx, args...)
}

func (p preparedTx) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	s, err := p.cache.get(ctx, query)
	if err != nil {
		return nil, err
	}
	return p.tx.StmtContext(ctx, s).QueryContext(ctx, args...)
}

func (p preparedTx) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	s, err := p.cache.get(ctx, query)
	if err != nil {
		return p.tx.QueryRowContext(ctx, query, args...) // the same error, as a Row
	}
	return p.tx.StmtContext(ctx, s).QueryRowContext(ctx, args...)
}

// QueryContext runs the cached statement of query on the database, outside
// any transaction: a read (Get) parses nothing once its statement is
// prepared.
func (c *stmtCache) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	s, err := c.get(ctx, query)
	if err != nil {
		return nil, err
	}
	return s.QueryContext(ctx, args...)
}
