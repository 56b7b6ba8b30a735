//go:build race

package blocks

const raceEnabled = true
