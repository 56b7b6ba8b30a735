package blockcheck

import (
	"encoding/json"
)

// Home checks a Home tab view object, as sent in views.publish "view":
// type "home", at most MaxViewBlocks blocks, the same block and element
// limits as a modal; no title, submit or close (Home tabs have none).
// Pointers start at /view.
func Home(view json.RawMessage) error {
	c, m, ok := openView(view, "home")
	if !ok {
		return c.err()
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
