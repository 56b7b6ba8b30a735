package store_test

import (
	"testing"

	"github.com/askslack/askslack/store"
	"github.com/askslack/askslack/store/storetest"
)

func TestMemory(t *testing.T) {
	storetest.Exercise(t, func(t *testing.T) store.Store {
		return store.NewMemory(0, nil)
	})
	storetest.ExerciseAuditShared(t, storetest.AuditHarness{
		Shared: func(*testing.T) (store.Store, store.Store) {
			m := store.NewMemory(0, nil)
			return m, m
		},
	})
}
