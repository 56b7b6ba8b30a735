package redisstore

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"
)

func TestSchemaMarker(t *testing.T) {
	ctx := context.Background()
	t.Run("an empty store gets this release's marker", func(t *testing.T) {
		r, rdb := newTestRedis(t, Options{})
		if err := r.CheckSchema(ctx, "rel-a"); err != nil {
			t.Fatal(err)
		}
		got := rdb.HGetAll(ctx, r.k.schema()).Val()
		if got["version"] != strconv.Itoa(SchemaVersion) || got["minReader"] != strconv.Itoa(SchemaMinReader) || got["release"] != "rel-a" {
			t.Fatalf("marker = %v", got)
		}
		// Another replica of the same schema leaves the first writer's name.
		if err := r.CheckSchema(ctx, "rel-b"); err != nil {
			t.Fatal(err)
		}
		if got := rdb.HGet(ctx, r.k.schema(), "release").Val(); got != "rel-a" {
			t.Fatalf("release = %q; want the first writer's", got)
		}
	})

	t.Run("an older marker is raised", func(t *testing.T) {
		r, rdb := newTestRedis(t, Options{})
		rdb.HSet(ctx, r.k.schema(), "version", SchemaVersion-1, "minReader", 0, "release", "old")
		if err := r.CheckSchema(ctx, "new"); err != nil {
			t.Fatal(err)
		}
		if got := rdb.HGetAll(ctx, r.k.schema()).Val(); got["version"] != strconv.Itoa(SchemaVersion) || got["release"] != "new" {
			t.Fatalf("marker = %v", got)
		}
	})

	t.Run("a newer compatible marker is read and kept", func(t *testing.T) {
		r, rdb := newTestRedis(t, Options{})
		rdb.HSet(ctx, r.k.schema(), "version", SchemaVersion+1, "minReader", SchemaVersion, "release", "next")
		if err := r.CheckSchema(ctx, "this"); err != nil {
			t.Fatalf("a rollback beside a compatible newer release refused: %v", err)
		}
		if got := rdb.HGetAll(ctx, r.k.schema()).Val(); got["version"] != strconv.Itoa(SchemaVersion+1) || got["release"] != "next" {
			t.Fatalf("marker = %v; want the newer one kept", got)
		}
	})

	t.Run("a newer incompatible marker refuses, naming the release", func(t *testing.T) {
		r, rdb := newTestRedis(t, Options{})
		rdb.HSet(ctx, r.k.schema(), "version", SchemaReads+2, "minReader", SchemaReads+1, "release", "v9.9.9")
		err := r.CheckSchema(ctx, "this")
		if !errors.Is(err, ErrSchemaTooNew) {
			t.Fatalf("err = %v; want ErrSchemaTooNew", err)
		}
		var se *SchemaError
		if !errors.As(err, &se) || se.Release != "v9.9.9" || se.Version != SchemaReads+2 || se.MinReader != SchemaReads+1 {
			t.Fatalf("err = %#v", err)
		}
		for _, want := range []string{"v9.9.9", "docs/upgrading.md", "Run release v9.9.9 or newer"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("message %q does not say %q", err, want)
			}
		}
		if got := rdb.HGet(ctx, r.k.schema(), "release").Val(); got != "v9.9.9" {
			t.Fatalf("marker changed by a refused release: %q", got)
		}
	})

	t.Run("a schema 2 writer raises the marker; this release's default reads it, fc987cc's check refuses it", func(t *testing.T) {
		r2, rdb := newTestRedis(t, Options{Schema: 2})
		if err := r2.CheckSchema(ctx, "flagged"); err != nil {
			t.Fatal(err)
		}
		if got := rdb.HGetAll(ctx, r2.k.schema()).Val(); got["version"] != "2" || got["minReader"] != "2" {
			t.Fatalf("marker = %v; want version 2, min reader 2", got)
		}
		r1, _ := newStoreOn(t, rdb, r2.k.prefix, Options{})
		if err := r1.CheckSchema(ctx, "default"); err != nil {
			t.Fatalf("this release's default refused a schema 2 store: %v", err)
		}
		// fc987cc sends four arguments, its own schema 1 the highest it reads.
		res, err := schemaScript.Run(ctx, rdb, []string{r2.k.schema()}, 1, 1, "fc987cc", 0).Slice()
		if err != nil || res[0] != int64(2) {
			t.Fatalf("fc987cc's check = %v, %v; want refused (2)", res, err)
		}
	})
}
