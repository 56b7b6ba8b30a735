package loadbench

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"time"
)

// OpenTimed opens n timed asks (window w) with Prefer: respond-async, so
// none holds a connection or a goroutine, spread over the bots at bases,
// 64 at a time; it returns when every one was accepted.
func OpenTimed(ctx context.Context, bases []string, runID string, n int, w time.Duration) error {
	client := &http.Client{Transport: Transport(64), Timeout: 30 * time.Second}
	defer client.CloseIdleConnections()
	sem := make(chan struct{}, 64)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var first error
	for i := range n {
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			if err := openTimed(ctx, client, bases[i%len(bases)], fmt.Sprintf("%s-timed-%d", runID, i), i, w); err != nil {
				mu.Lock()
				first = cmpOr(first, err)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return first
}

func cmpOr(a, b error) error {
	if a != nil {
		return a
	}
	return b
}

func openTimed(ctx context.Context, client *http.Client, base, callID string, i int, w time.Duration) error {
	body := bytes.TrimSuffix(askBody(callID, fmt.Sprintf("bench-timed-%d", i%64)), []byte("}"))
	body = append(body, []byte(`,"timeoutMs":`+strconv.FormatInt(w.Milliseconds(), 10)+`}`)...)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"/v1/asks", bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Prefer", "respond-async")
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted && resp.StatusCode != http.StatusOK {
		return fmt.Errorf("POST /v1/asks (async, timed): %s", resp.Status)
	}
	return nil
}

// ClaimsAfter waits until every one of n timed waits (askslack's claims
// index under prefix) has a lease that ends after t — claimed (or
// renewed, or taken over) since t-lease — polling every 50 ms, and returns
// when that happened, or an error at the deadline with how many were.
func (r *Redis) ClaimsAfter(ctx context.Context, prefix string, n int, t time.Time, deadline time.Time) (time.Time, error) {
	key := prefix + ":claims"
	for {
		r.sent("zcount")
		held, err := r.rdb.ZCount(ctx, key, "("+strconv.FormatInt(t.UnixMilli(), 10), "+inf").Result()
		if err != nil {
			return time.Time{}, err
		}
		if held >= int64(n) {
			return time.Now(), nil
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return time.Time{}, fmt.Errorf("%d of %d timed waits held by %s", held, n, deadline.Format(time.TimeOnly))
		}
		time.Sleep(50 * time.Millisecond) // measuring equipment: poll the store
	}
}
