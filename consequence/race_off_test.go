//go:build !race

package consequence

const raceEnabled = false
