package redisstore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
)

// The stored schema marker (docs/upgrading.md). A release that changes what
// a stored value means — not one that only adds fields, keys or scripts,
// which older releases ignore — raises SchemaVersion; if the releases before
// it cannot work on what it writes, it raises SchemaMinReader too, and they
// refuse to start against that store instead of misreading it.
const (
	// SchemaVersion is the version of the stored shape this release writes.
	// 1 is the shape every release up to and including the one that added
	// this marker writes (a store without a marker is read as 1).
	SchemaVersion = 1
	// SchemaMinReader is the oldest SchemaVersion whose releases can work
	// on a store this release has written (with Options.Schema 2: 2).
	SchemaMinReader = 1
	// SchemaReads is the highest schema this release works on: it reads
	// schema 2's stale index beside schema 1's, and writes schema 2 when
	// told to (Options.Schema, ASKSLACK_STORE_SCHEMA=2), which the next
	// release will do by default.
	SchemaReads = 2
)

// ErrSchemaTooNew: the store was written by a release whose stored shape
// this release cannot read. See *SchemaError for which release.
var ErrSchemaTooNew = errors.New("store written by a newer, incompatible release")

// SchemaError says which release wrote a store this one cannot read. It
// matches ErrSchemaTooNew with errors.Is.
type SchemaError struct {
	Prefix    string // the key prefix
	Version   int    // the stored schema version
	MinReader int    // the oldest schema version that can read it
	Release   string // the release that wrote Version
	Own       int    // this release's SchemaVersion
}

func (e *SchemaError) Error() string {
	return fmt.Sprintf("the Redis store under prefix %q was written by release %s with schema %d, which needs schema %d or later to read; "+
		"this release has schema %d and would misread it. Run release %s or newer (or roll back the store with it), "+
		"or point REDIS_URL / ASKSLACK_REDIS_PREFIX at another store; see docs/upgrading.md",
		e.Prefix, e.Release, e.Version, e.MinReader, e.Own, e.Release)
}

func (e *SchemaError) Is(target error) bool { return target == ErrSchemaTooNew }

// schemaScript checks and raises the stored schema marker, in one step so
// two replicas of different releases starting together leave the higher.
// KEYS[1] the marker hash (version, minReader, release, at).
// ARGV[1] own version (written), ARGV[2] own min reader, ARGV[3] own
// release, ARGV[4] now ms, ARGV[5] the highest version this release reads
// (ARGV[1] when absent, as releases before it send).
// Returns {code, stored version, stored min reader, stored release}: 0 the
// marker is ours now (written, or it already said our version), 1 a newer
// release wrote it and we can read it, 2 a newer release wrote it and we
// cannot. A missing marker counts as version 1, min reader 1 (the releases
// before the marker), and is written.
var schemaScript = redis.NewScript(`
local v = tonumber(redis.call('HGET', KEYS[1], 'version') or '1')
local m = tonumber(redis.call('HGET', KEYS[1], 'minReader') or '1')
local rel = redis.call('HGET', KEYS[1], 'release') or 'before the schema marker'
local own = tonumber(ARGV[1])
local reads = tonumber(ARGV[5] or ARGV[1])
if v > own then
  if m > reads then return {2, v, m, rel} end
  return {1, v, m, rel}
end
if v < own or redis.call('EXISTS', KEYS[1]) == 0 then
  redis.call('HSET', KEYS[1], 'version', ARGV[1], 'minReader', ARGV[2], 'release', ARGV[3], 'at', ARGV[4])
end
return {0, v, m, rel}
`)

// CheckSchema reads the store's schema marker and raises it to this
// release's SchemaVersion when that is higher. It returns a *SchemaError
// (ErrSchemaTooNew) when a newer release wrote a shape this one cannot
// read; the bot must not start then. release names this build in the
// marker and in other releases' errors. A newer but compatible marker is
// logged and left as it is (a rollback during a rolling update).
func (r *Store) CheckSchema(ctx context.Context, release string) error {
	minReader := SchemaMinReader
	if r.schema == 2 {
		minReader = 2 // fc987cc and older would not sweep the {stale} index
	}
	res, err := schemaScript.Run(ctx, r.rdb, []string{r.k.schema()},
		r.schema, minReader, release, time.Now().UnixMilli(), SchemaReads).Slice()
	if err != nil {
		return fmt.Errorf("store: schema marker: %w", err)
	}
	if len(res) != 4 {
		return fmt.Errorf("store: schema marker: unexpected reply %v", res)
	}
	code, _ := res[0].(int64)
	v, _ := res[1].(int64)
	m, _ := res[2].(int64)
	rel, _ := res[3].(string)
	switch code {
	case 0:
		return nil
	case 1:
		r.log.Warn("store: a newer release wrote this store; it is compatible with this one (a rolling update or a rollback in progress)",
			"storedSchema", v, "storedRelease", rel, "schema", r.schema)
		return nil
	default:
		return &SchemaError{Prefix: r.k.prefix, Version: int(v), MinReader: int(m), Release: rel, Own: SchemaReads}
	}
}
