package storetest

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/askslack/askslack/store"
)

func exerciseInstalls(t *testing.T, setup func(*testing.T) store.Store) {
	t.Run("InstallsRoundTripReplaceAndDrop", func(t *testing.T) { checkInstallsRoundTrip(t, setup(t)) })
	t.Run("InstallsRacingDropsOneWins", func(t *testing.T) { checkInstallsDropRace(t, setup(t)) })
}

func checkInstallsRoundTrip(t *testing.T, s store.Store) {
	ctx := context.Background()
	if _, err := s.Install(ctx, "T1"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("Install of nothing: %v, want ErrNotFound", err)
	}
	if all, err := s.Installs(ctx); err != nil || len(all) != 0 {
		t.Fatalf("Installs of an empty store: %v %v", all, err)
	}
	for _, kv := range [][2]string{{"T1", "one"}, {"E1", "org"}, {"T1", "one again"}} {
		if err := s.PutInstall(ctx, kv[0], []byte(kv[1])); err != nil {
			t.Fatal(err)
		}
	}
	if b, err := s.Install(ctx, "T1"); err != nil || string(b) != "one again" {
		t.Fatalf("Install(T1) = %q %v, want the last put", b, err)
	}
	all, err := s.Installs(ctx)
	if err != nil || len(all) != 2 || string(all["E1"]) != "org" {
		t.Fatalf("Installs = %q %v", all, err)
	}
	if ok, err := s.DropInstall(ctx, "T1"); !ok || err != nil {
		t.Fatalf("DropInstall(T1) = %v %v", ok, err)
	}
	if ok, _ := s.DropInstall(ctx, "T1"); ok {
		t.Fatal("a second DropInstall(T1) says it dropped it")
	}
	if _, err := s.Install(ctx, "T1"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("Install after drop: %v", err)
	}
}

func checkInstallsDropRace(t *testing.T, s store.Store) {
	ctx := context.Background()
	if err := s.PutInstall(ctx, "T9", []byte("x")); err != nil {
		t.Fatal(err)
	}
	var won atomic.Int32
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			if ok, err := s.DropInstall(ctx, "T9"); err == nil && ok {
				won.Add(1)
			}
		})
	}
	wg.Wait()
	if won.Load() != 1 {
		t.Fatalf("%d racing drops won, want 1", won.Load())
	}
}
