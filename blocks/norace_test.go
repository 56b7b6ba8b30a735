//go:build !race

package blocks

const raceEnabled = false
