package store

import "context"

// Installs keeps the Slack installations of a deployment that serves
// several workspaces ("Add to Slack", package installs): each under its key
// (a workspace's team id, or an enterprise id for an org-wide install) as
// the bytes installs gives it — sealed, so the store never holds a token
// it could read. Nothing expires: an installation lasts until the app is
// uninstalled.
type Installs interface {
	// PutInstall stores sealed under key, replacing what was there.
	PutInstall(ctx context.Context, key string, sealed []byte) error
	// Install returns what PutInstall stored under key, ErrNotFound when
	// nothing is.
	Install(ctx context.Context, key string) ([]byte, error)
	// DropInstall deletes key and reports whether it was there: of
	// replicas racing to drop one installation, exactly one learns it
	// did (that one withdraws the workspace's asks).
	DropInstall(ctx context.Context, key string) (bool, error)
	// Installs returns every installation by key.
	Installs(ctx context.Context) (map[string][]byte, error)
}
