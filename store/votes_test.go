package store_test

import (
	"testing"

	"github.com/askslack/askslack/store"
	"github.com/askslack/askslack/store/storetest"
)

func TestMemoryVotes(t *testing.T) {
	storetest.ExerciseVotes(t, func(*testing.T) store.Store { return store.NewMemory(0, nil) },
		func(*testing.T) (store.Store, store.Store) {
			m := store.NewMemory(0, nil)
			return m, m
		})
}
