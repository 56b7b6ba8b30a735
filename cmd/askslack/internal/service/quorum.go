package service

import "github.com/askslack/askslack/waterfall"

// checkQuorum reads ASKSLACK_QUORUM (waterfall.ParseQuorum says the
// grammar; its errors name the variable).
func (c *Config) checkQuorum() []error {
	q, err := waterfall.ParseQuorum(c.Quorum)
	if err != nil {
		return []error{err}
	}
	c.quorum = q
	return nil
}
