package installs

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
)

// Sealer encrypts installations at rest with AES-256-GCM (the standard
// library's): the store holds no token it could read. The first key seals;
// every key opens, so a key is rotated by putting the new one first and
// keeping the old one after it until every installation was sealed again
// (Keeper.Reseal, run at start).
type Sealer struct {
	keys []sealKey
}

type sealKey struct {
	id   string // the first 8 hex digits of the key's SHA-256: which key sealed a value
	aead cipher.AEAD
}

const sealPrefix = "v1."

// ParseKeys reads ASKSLACK_INSTALL_KEYS: base64 (standard or URL, padded or
// not) keys of 32 bytes, the sealing one first.
func ParseKeys(encoded []string) (*Sealer, error) {
	var raw [][]byte
	for i, e := range encoded {
		e = strings.TrimSpace(e)
		var k []byte
		var err error
		for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
			if k, err = enc.DecodeString(e); err == nil {
				break
			}
		}
		if err != nil || len(k) != 32 {
			return nil, fmt.Errorf("key %d of ASKSLACK_INSTALL_KEYS is not 32 bytes of base64 (make one with: openssl rand -base64 32)", i+1)
		}
		raw = append(raw, k)
	}
	return NewSealer(raw...)
}

// NewSealer seals with the first key and opens with any.
func NewSealer(keys ...[]byte) (*Sealer, error) {
	if len(keys) == 0 {
		return nil, errors.New("installs: no sealing key")
	}
	s := &Sealer{}
	for _, k := range keys {
		block, err := aes.NewCipher(k)
		if err != nil {
			return nil, err
		}
		aead, err := cipher.NewGCM(block)
		if err != nil {
			return nil, err
		}
		sum := sha256.Sum256(k)
		s.keys = append(s.keys, sealKey{id: hex.EncodeToString(sum[:4]), aead: aead})
	}
	return s, nil
}

// Seal encrypts plain for the installation under key: key is the
// additional data, so a sealed value moved to another key does not open.
func (s *Sealer) Seal(plain []byte, key string) []byte {
	k := s.keys[0]
	nonce := make([]byte, k.aead.NonceSize())
	_, _ = rand.Read(nonce) // crypto/rand.Read never fails (Go 1.24+)
	ct := k.aead.Seal(nonce, nonce, plain, []byte(key))
	return []byte(sealPrefix + k.id + "." + base64.RawURLEncoding.EncodeToString(ct))
}

// Open decrypts what Seal made for key, with whichever key sealed it; it
// reports whether that was an older key (the value should be sealed again).
func (s *Sealer) Open(sealed []byte, key string) (plain []byte, old bool, err error) {
	rest, ok := strings.CutPrefix(string(sealed), sealPrefix)
	id, body, ok2 := strings.Cut(rest, ".")
	if !ok || !ok2 {
		return nil, false, errors.New("installs: not a sealed installation")
	}
	ct, err := base64.RawURLEncoding.DecodeString(body)
	if err != nil {
		return nil, false, errors.New("installs: a sealed installation is damaged")
	}
	for i, k := range s.keys {
		if k.id != id {
			continue
		}
		n := k.aead.NonceSize()
		if len(ct) < n {
			return nil, false, errors.New("installs: a sealed installation is damaged")
		}
		plain, err := k.aead.Open(nil, ct[:n], ct[n:], []byte(key))
		if err != nil {
			return nil, false, fmt.Errorf("installs: the installation of %s does not open with key %s: damaged or moved", key, id)
		}
		return plain, i > 0, nil
	}
	return nil, false, fmt.Errorf("installs: the installation of %s was sealed with key %s, which ASKSLACK_INSTALL_KEYS does not hold", key, id)
}
