package installs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"sync"
	"time"

	"github.com/askslack/askslack/store"
)

// Store is the part of the store the installations live in.
type Store interface {
	store.Installs
}

// Keeper keeps the installations: sealed in the store, shared by every
// replica, and read from a snapshot this replica refreshes every
// KeeperOptions.Fresh (sooner for short-lived tokens: snapshotTTL; and at
// once after a miss, at most once a second), so
// a Slack call costs no store read. An installation another replica
// removed or refreshed is seen here within Fresh; a call Slack refuses
// for its token re-reads at once (Transport).
type Keeper struct {
	store Store
	seal  *Sealer
	now   func() time.Time
	fresh time.Duration
	log   *slog.Logger

	mu      sync.Mutex
	snap    map[string]Installation // key → installation; replaced, never changed in place
	teams   map[string]string       // workspace → the key of the installation serving it
	read    time.Time               // when snap was read
	ttl     time.Duration           // how long snap serves: Fresh, or less for short-lived tokens
	missed  time.Time               // the last re-read a miss caused
	reading chan struct{}           // non-nil while a read is under way
	saved   chan struct{}           // told of each Save here (the refresher looks again)
}

// KeeperOptions tune a Keeper; zero values get the defaults noted.
type KeeperOptions struct {
	// Fresh is how old the snapshot may grow; default 10 s.
	Fresh time.Duration
	Now   func() time.Time
	Log   *slog.Logger
}

// NewKeeper returns a Keeper over st sealing with seal.
func NewKeeper(st Store, seal *Sealer, o KeeperOptions) *Keeper {
	if o.Fresh <= 0 {
		o.Fresh = 10 * time.Second
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Log == nil {
		o.Log = slog.Default()
	}
	return &Keeper{store: st, seal: seal, now: o.Now, fresh: o.Fresh, log: o.Log, saved: make(chan struct{}, 1)}
}

// Save stores in (replacing the installation under its key) and puts it
// in this replica's snapshot at once.
func (k *Keeper) Save(ctx context.Context, in Installation) error {
	if in.Key() == "" || in.BotToken == "" {
		return errors.New("installs: an installation needs a workspace or enterprise id and a bot token")
	}
	b, err := json.Marshal(in)
	if err != nil {
		return err
	}
	if err := k.store.PutInstall(ctx, in.Key(), k.seal.Seal(b, in.Key())); err != nil {
		return fmt.Errorf("storing the installation of %s: %w", in.Key(), err)
	}
	select {
	case k.saved <- struct{}{}:
	default:
	}
	k.mu.Lock()
	if k.snap != nil {
		snap := maps.Clone(k.snap) // a snapshot is never changed once read: All's callers range over it
		snap[in.Key()] = in
		k.snap = snap
		k.index()
	}
	k.mu.Unlock()
	return nil
}

// Get returns the installation kept under key (a team or enterprise id),
// read from the store.
func (k *Keeper) Get(ctx context.Context, key string) (Installation, error) {
	b, err := k.store.Install(ctx, key)
	if errors.Is(err, store.ErrNotFound) {
		return Installation{}, ErrNotInstalled
	}
	if err != nil {
		return Installation{}, err
	}
	return k.open(key, b)
}

func (k *Keeper) open(key string, b []byte) (Installation, error) {
	plain, _, err := k.seal.Open(b, key)
	if err != nil {
		return Installation{}, err
	}
	var in Installation
	if err := json.Unmarshal(plain, &in); err != nil {
		return Installation{}, fmt.Errorf("installs: the installation of %s does not decode: %w", key, err)
	}
	return in, nil
}

// All returns every installation, read from the store.
func (k *Keeper) All(ctx context.Context) ([]Installation, error) {
	snap, err := k.load(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]Installation, 0, len(snap))
	for _, in := range snap {
		out = append(out, in)
	}
	return out, nil
}

// For returns the installation serving workspace team: its own, or the
// org-wide install of its organization that the org admin added it to.
func (k *Keeper) For(ctx context.Context, team string) (Installation, error) {
	if team == "" {
		return Installation{}, ErrNoWorkspace
	}
	k.mu.Lock()
	stale := k.snap == nil || k.now().Sub(k.read) >= k.ttl
	in, ok := k.lookup(team)
	k.mu.Unlock()
	if ok && !stale {
		return in, nil
	}
	if !stale && !k.mayReread() {
		return Installation{}, ErrNotInstalled
	}
	if _, err := k.load(ctx); err != nil {
		if ok { // the store is down: the token this replica last read still serves
			k.log.Warn("cannot re-read the Slack installations; using the last read", "team", team, "err", err)
			return in, nil
		}
		return Installation{}, err
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	if in, ok := k.lookup(team); ok {
		return in, nil
	}
	return Installation{}, ErrNotInstalled
}

// Reread makes the next For read the store: Slack refused a token.
func (k *Keeper) Reread() {
	k.mu.Lock()
	k.read = time.Time{}
	k.mu.Unlock()
}

// mayReread says whether a miss may re-read the store now (once a second,
// so clicks from a workspace that never installed cannot hammer it).
func (k *Keeper) mayReread() bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	if now := k.now(); now.Sub(k.missed) >= time.Second {
		k.missed = now
		return true
	}
	return false
}

func (k *Keeper) lookup(team string) (Installation, bool) {
	key, ok := k.teams[team]
	if !ok {
		return Installation{}, false
	}
	in, ok := k.snap[key]
	return in, ok
}

// load reads every installation into the snapshot; callers racing to
// load share one read.
func (k *Keeper) load(ctx context.Context) (map[string]Installation, error) {
	k.mu.Lock()
	if ch := k.reading; ch != nil {
		k.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		k.mu.Lock()
		defer k.mu.Unlock()
		if k.snap == nil {
			return nil, errors.New("installs: reading the installations failed")
		}
		return k.snap, nil
	}
	ch := make(chan struct{})
	k.reading = ch
	k.mu.Unlock()
	defer func() {
		k.mu.Lock()
		k.reading = nil
		k.mu.Unlock()
		close(ch)
	}()
	all, err := k.store.Installs(ctx)
	if err != nil {
		return nil, fmt.Errorf("reading the Slack installations: %w", err)
	}
	snap := make(map[string]Installation, len(all))
	for key, b := range all {
		in, err := k.open(key, b)
		if err != nil {
			k.log.Error("an installation does not open; its workspace is not served", "key", key, "err", err)
			continue
		}
		snap[key] = in
	}
	k.mu.Lock()
	k.snap, k.read, k.ttl = snap, k.now(), snapshotTTL(snap, k.fresh)
	k.index()
	k.mu.Unlock()
	return snap, nil
}

// index rebuilds teams from snap; a workspace's own install wins over an
// org-wide one that also lists it. Called with mu held.
func (k *Keeper) index() {
	k.teams = make(map[string]string, len(k.snap))
	for key, in := range k.snap {
		if in.OrgWide {
			for _, t := range in.Teams {
				if _, own := k.snap[t]; !own {
					k.teams[t] = key
				}
			}
			continue
		}
		k.teams[in.Team] = key
	}
}

// Reseal seals again every installation an older key sealed, so the old
// key can be dropped from ASKSLACK_INSTALL_KEYS; it says how many.
func (k *Keeper) Reseal(ctx context.Context) (int, error) {
	all, err := k.store.Installs(ctx)
	if err != nil {
		return 0, err
	}
	n := 0
	for key, b := range all {
		plain, old, err := k.seal.Open(b, key)
		if err != nil || !old {
			continue
		}
		if err := k.store.PutInstall(ctx, key, k.seal.Seal(plain, key)); err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}

// Remove drops the installation kept under key and reports whether this
// call did (of replicas racing, one does), with what was kept.
func (k *Keeper) Remove(ctx context.Context, key string) (Installation, bool, error) {
	in, gerr := k.Get(ctx, key)
	ok, err := k.store.DropInstall(ctx, key)
	if err != nil {
		return Installation{}, false, err
	}
	k.mu.Lock()
	if k.snap != nil {
		snap := maps.Clone(k.snap)
		delete(snap, key)
		k.snap = snap
		k.index()
	}
	k.mu.Unlock()
	if gerr != nil {
		in = Installation{Team: key}
	}
	return in, ok, nil
}

// Saved is told when this replica saves an installation (a new install,
// a refresh): a token that expires soon is looked at without waiting.
func (k *Keeper) Saved() <-chan struct{} { return k.saved }

// snapshotTTL is how long a snapshot serves: fresh, or an eighth of the
// shortest rotating token's life when that is less. A refreshed token's
// predecessor works until it expires but is revoked by the refresh after
// next (Slack keeps two tokens live), so a replica must read a new token
// well within one refresh interval — half a token's life — of its
// issue: with Slack's 12 h tokens that is always Fresh.
func snapshotTTL(snap map[string]Installation, fresh time.Duration) time.Duration {
	ttl := fresh
	for _, in := range snap {
		if in.Expires.IsZero() {
			continue
		}
		from := in.Refreshed
		if from.IsZero() {
			from = in.Installed
		}
		if life := in.Expires.Sub(from); life > 0 {
			ttl = min(ttl, max(life/8, 100*time.Millisecond))
		}
	}
	return ttl
}
