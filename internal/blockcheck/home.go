package blockcheck

import (
	"bytes"
	"encoding/json"
)

// Home checks a Home tab view object, as sent in views.publish "view":
// type "home", at most MaxViewBlocks blocks, the same block and element
// limits as a modal; no title, submit or close (Home tabs have none).
// Pointers start at /view.
func Home(view json.RawMessage) error {
	c := &checker{inView: true, blockIDs: map[string]string{}}
	view = bytes.TrimSpace(view)
	if len(view) > MaxViewBytes {
		c.add("/view", "view_too_large: %d bytes, must be at most %d", len(view), MaxViewBytes)
	}
	v, err := decode(view)
	if err != nil {
		c.add("/view", "invalid JSON: %v", err)
		return c.err()
	}
	m, ok := c.object("/view", v)
	if !ok {
		return c.err()
	}
	if typ, ok := c.str("/view", m, "type", true, 0); ok && typ != "home" {
		c.add("/view/type", "must be \"home\", got %q", typ)
	}
	for _, f := range []string{"title", "submit", "close"} {
		if _, has := m[f]; has {
			c.add("/view/"+f, "a Home tab has no %s", f)
		}
	}
	c.str("/view", m, "private_metadata", false, MaxViewPrivateMetadataLen)
	c.str("/view", m, "callback_id", false, MaxViewCallbackIDLen)
	c.str("/view", m, "external_id", false, MaxViewExternalIDLen)
	if b, ok := m["blocks"]; !ok {
		c.add("/view", "missing required field: blocks")
	} else {
		c.blocks("/view/blocks", b, MaxViewBlocks)
	}
	return c.err()
}
