package testredis

import (
	"context"
	"net"
	"testing"

	"github.com/redis/go-redis/v9"
)

// A port another process took before the server bound it costs another
// try, not the test; the server answers, and is gone when its test ends.
func TestStartServerRetriesATakenPortAndStopsAtTheEnd(t *testing.T) {
	squatter, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer squatter.Close()
	free := freePort
	t.Cleanup(func() { freePort = free })
	handed := 0
	freePort = func() (int, error) {
		handed++
		if handed == 1 {
			return squatter.Addr().(*net.TCPAddr).Port, nil
		}
		return free()
	}
	var addr string
	t.Run("server", func(t *testing.T) {
		s := StartServer(t)
		addr = s.Addr
		if addr == squatter.Addr().String() || handed < 2 {
			t.Fatalf("server on %s after %d ports; want another than the taken %s", addr, handed, squatter.Addr())
		}
		rdb := redis.NewClient(&redis.Options{Addr: addr})
		defer rdb.Close()
		if err := rdb.Ping(context.Background()).Err(); err != nil {
			t.Fatal(err)
		}
	})
	if addr == "" {
		return // skipped: no redis-server
	}
	if c, err := net.Dial("tcp", addr); err == nil {
		c.Close()
		t.Fatalf("%s still accepts connections after its test ended", addr)
	}
}
