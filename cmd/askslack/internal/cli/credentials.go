package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// The credentials file askslack login writes: one personal agent token
// per bot URL, in the user's config directory
// (os.UserConfigDir()/askslack/credentials.json: ~/.config on Linux,
// ~/Library/Application Support on macOS), readable by the user only.
// askslack ask, mcp and hook use the token stored for their --url when
// ASKSLACK_TOKEN (or --token) is not given.

// Credential is one bot's stored token.
type Credential struct {
	URL       string    `json:"url"`
	Token     string    `json:"token"`
	ID        string    `json:"id"`
	Name      string    `json:"name"`
	Owner     string    `json:"owner"`
	OwnerName string    `json:"ownerName,omitempty"`
	Expires   time.Time `json:"expires"`
	Saved     time.Time `json:"saved"`
}

type credentialsFile struct {
	// Bots maps a bot's URL (NormalURL) to its credential.
	Bots map[string]Credential `json:"bots"`
}

// CredentialsPath is where the credentials file is.
func CredentialsPath() (string, error) {
	dir, err := os.UserConfigDir()
	if err != nil {
		return "", fmt.Errorf("no config directory to keep the token in: %w", err)
	}
	return filepath.Join(dir, "askslack", "credentials.json"), nil
}

// NormalURL is how a bot URL keys the file: scheme and host in lower case,
// no trailing slash.
func NormalURL(raw string) string {
	raw = strings.TrimRight(strings.TrimSpace(raw), "/")
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return raw
	}
	u.Scheme, u.Host = strings.ToLower(u.Scheme), strings.ToLower(u.Host)
	return u.String()
}

func readCredentials() (credentialsFile, string, error) {
	f := credentialsFile{Bots: map[string]Credential{}}
	path, err := CredentialsPath()
	if err != nil {
		return f, "", err
	}
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return f, path, nil
	}
	if err != nil {
		return f, path, err
	}
	if err := json.Unmarshal(b, &f); err != nil {
		return f, path, fmt.Errorf("%s: %w", path, err)
	}
	if f.Bots == nil {
		f.Bots = map[string]Credential{}
	}
	return f, path, nil
}

// StoredCredential is the credential askslack login stored for the bot at
// botURL; ok false when there is none (or the file cannot be read).
func StoredCredential(botURL string) (Credential, bool) {
	f, _, err := readCredentials()
	if err != nil {
		return Credential{}, false
	}
	c, ok := f.Bots[NormalURL(botURL)]
	return c, ok && c.Token != ""
}

// StoredToken is the token stored for botURL, or "".
func StoredToken(botURL string) string {
	c, _ := StoredCredential(botURL)
	return c.Token
}

// SaveCredential stores c for its URL, replacing what was stored for it,
// and returns the file's path. The file is written whole and renamed into
// place, mode 0600 in a directory of mode 0700.
func SaveCredential(c Credential) (string, error) {
	f, path, err := readCredentials()
	if err != nil && path == "" {
		return "", err
	}
	if err != nil {
		f = credentialsFile{Bots: map[string]Credential{}} // unreadable: start over
	}
	c.URL = NormalURL(c.URL)
	f.Bots[c.URL] = c
	return path, writeCredentials(path, f)
}

// RemoveCredential forgets what was stored for botURL; it reports whether
// there was something.
func RemoveCredential(botURL string) (bool, string, error) {
	f, path, err := readCredentials()
	if err != nil {
		return false, path, err
	}
	key := NormalURL(botURL)
	if _, ok := f.Bots[key]; !ok {
		return false, path, nil
	}
	delete(f.Bots, key)
	return true, path, writeCredentials(path, f)
}

func writeCredentials(path string, f credentialsFile) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	b, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".credentials-*.json")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // gone once renamed
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return err
	}
	if _, err := tmp.Write(append(b, '\n')); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
